// Runs inside the sandbox with the runner's own ESLint: `node eslint-report.mjs <out.json>
// <max findings> <file>…` (paths relative to the working directory). The configuration is
// fixed here and no configuration file is read, because the repository's (and so the
// candidate's) eslint.config.js could switch rules off or run code.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

const [outPath, maxText, ...files] = process.argv.slice(2);
const maxFindings = Number(maxText);

const JS_FILES = ["**/*.js", "**/*.mjs", "**/*.cjs", "**/*.jsx"];
const TS_FILES = ["**/*.ts", "**/*.mts", "**/*.cts", "**/*.tsx"];

// Recommended rules that flag code that throws or misbehaves whenever it runs stay errors;
// the rest of the recommended set is reported as warnings.
const ERROR_RULES = new Set([
  "no-undef", "no-const-assign", "no-class-assign", "no-func-assign", "no-import-assign",
  "no-dupe-args", "no-dupe-keys", "no-dupe-class-members", "no-obj-calls",
  "no-new-native-nonconstructor", "no-this-before-super", "constructor-super",
  "no-unsafe-negation", "no-invalid-regexp", "use-isnan", "valid-typeof",
]);

// Node's globals, both module systems: ESLint has no environment presets any more, and the
// `globals` package is not among the runner's dependencies.
const NODE_GLOBALS = Object.fromEntries(
  [
    "require", "module", "exports", "__dirname", "__filename", "global", "process", "Buffer",
    "console", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate",
    "clearImmediate", "queueMicrotask", "structuredClone", "URL", "URLSearchParams",
    "TextEncoder", "TextDecoder", "AbortController", "AbortSignal", "EventTarget", "Event",
    "CustomEvent", "MessageChannel", "MessagePort", "MessageEvent", "BroadcastChannel",
    "fetch", "Request", "Response", "Headers", "FormData", "Blob", "File", "WebSocket",
    "ReadableStream", "WritableStream", "TransformStream", "TextEncoderStream",
    "TextDecoderStream", "CompressionStream", "DecompressionStream", "performance", "crypto",
    "atob", "btoa", "navigator", "DOMException", "WebAssembly",
  ].map((name) => [name, "readonly"]),
);

function graded(rules) {
  return Object.fromEntries(
    Object.entries(rules ?? {}).map(([rule, setting]) => {
      const [level, ...options] = Array.isArray(setting) ? setting : [setting];
      if (level === "off" || level === 0) return [rule, setting];
      return [rule, [ERROR_RULES.has(rule) ? "error" : "warn", ...options]];
    }),
  );
}

async function configFor(needsTypeScript) {
  const { default: js } = await import("@eslint/js");
  const languageOptions = {
    ecmaVersion: "latest",
    sourceType: "module",
    globals: NODE_GLOBALS,
    parserOptions: { ecmaFeatures: { jsx: true } },
  };
  const config = [
    // Inline directives are the candidate's configuration too: /* eslint-disable */ must not hide findings.
    { files: [...JS_FILES, ...TS_FILES], languageOptions, linterOptions: { reportUnusedDisableDirectives: "off", noInlineConfig: true } },
    { files: [...JS_FILES, ...TS_FILES], rules: graded(js.configs.recommended.rules) },
    { files: ["**/*.cjs"], languageOptions: { sourceType: "commonjs" } },
  ];
  if (needsTypeScript) {
    // Scoped to TypeScript files: typescript-eslint's presets apply to every file otherwise.
    // They come last because they switch off the core rules the compiler already covers.
    const { default: tseslint } = await import("typescript-eslint");
    for (const part of tseslint.configs.recommended) config.push({ ...part, files: TS_FILES, rules: graded(part.rules) });
  }
  return config;
}

const result = { files_checked: 0, findings: [], truncated: false, error: null };
try {
  const { ESLint } = await import("eslint");
  const needsTypeScript = files.some((f) => /\.(ts|mts|cts|tsx)$/.test(f));
  const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: true, overrideConfig: await configFor(needsTypeScript), ignore: false });
  for (const file of files) {
    const [report] = await eslint.lintText(readFileSync(file, "utf8"), { filePath: resolve(file) });
    result.files_checked++;
    for (const m of report?.messages ?? []) {
      if (result.findings.length >= maxFindings) {
        result.truncated = true;
        break;
      }
      result.findings.push({
        file,
        line: m.line ?? 1,
        column: m.column ?? 1,
        rule: m.ruleId ?? (m.fatal ? "syntax-error" : "inline-config"),
        message: m.message,
        severity: m.fatal || m.severity === 2 ? "error" : "warning",
      });
    }
  }
} catch (err) {
  result.error = err instanceof Error ? err.message : String(err);
}
writeFileSync(outPath, JSON.stringify(result));
