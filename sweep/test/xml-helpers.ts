/**
 * A small XML well-formedness check for tests: balanced tags, quoted
 * attributes, no stray `<` or `&` in text. Enough to catch a broken JUnit
 * writer without an XML parser dependency.
 */

/** Throws describing the first problem; returns the root element's name. */
export function assertWellFormedXml(xml: string): string {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: string[] = [];
  let root = '';
  const re = /<([^>]*)>|([^<]+)/g;
  let m: RegExpExecArray | null = re.exec(body);
  while (m !== null) {
    if (m[2] !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(m[2]))
        throw new Error(`bare & in text: ${m[2]}`);
      if (stack.length === 0 && m[2].trim() !== '') throw new Error(`text outside the root: ${m[2]}`);
    } else {
      const tag = m[1] ?? '';
      if (tag.startsWith('/')) {
        const name = tag.slice(1).trim();
        const open = stack.pop();
        if (open !== name) throw new Error(`</${name}> closes <${open}>`);
      } else {
        const sm = /^([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)$/.exec(tag);
        if (!sm) throw new Error(`malformed tag <${tag}>`);
        if (stack.length === 0) {
          if (root !== '') throw new Error('more than one root element');
          root = sm[1]!;
        }
        if (sm[3] !== '/') stack.push(sm[1]!);
      }
    }
    m = re.exec(body);
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join('>, <')}>`);
  return root;
}
