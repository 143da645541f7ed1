/**
 * Escaping for everything a report inserts into HTML, inline scripts and
 * Markdown. Report text carries user data (scenario and tenant names), so
 * nothing is inserted raw.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * JSON for a `<script type="application/json">` block: `<` becomes `\u003c`
 * (so neither `</script` nor `<!--` can appear), and the line separators
 * U+2028/2029 are escaped too. JSON.parse reads it back unchanged.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * Makes JavaScript source safe inside an inline `<script>`: `</script` and
 * `<!--` cannot end or confuse the element. `<\/` and `<\!` mean the same as
 * `</` and `<!` inside JS strings, templates and regular expressions.
 */
export function scriptSafe(js: string): string {
  return js.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** Escapes text for Markdown paragraphs and table cells (no raw HTML, no accidental emphasis or links). */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\\`*_[\]|#]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r?\n/g, ' ');
}

/** A backtick fence longer than any run of backticks in `text`. */
export function codeFence(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  return '`'.repeat(Math.max(3, longest + 1));
}
