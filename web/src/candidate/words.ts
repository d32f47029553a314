/** An API message as a sentence of its own: with its final stop, so text after it reads apart. */
export function sentence(text: string): string {
  return /[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`;
}
