// The grammar of the task's language, downloaded when the workspace opens: one language pack,
// never all five.
import type { Language } from "@codemirror/language";

export type LanguageOf = (path: string) => Language | null;

export async function loadLanguage(taskLanguage: string | null): Promise<LanguageOf | null> {
  switch (taskLanguage?.toLowerCase()) {
    case "javascript":
    case "typescript":
      return (await import("./languages/javascript")).languageOf;
    case "python":
      return (await import("./languages/python")).languageOf;
    case "go":
      return (await import("./languages/go")).languageOf;
    case "java":
      return (await import("./languages/java")).languageOf;
    case "rust":
      return (await import("./languages/rust")).languageOf;
    default:
      return null;
  }
}
