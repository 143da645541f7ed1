import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { codeFence, escapeHtml, escapeMarkdown, jsonForScript, scriptSafe } from './escape.js';

describe('escaping', () => {
  it('escapes HTML metacharacters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('keeps </script> and <!-- out of JSON script blocks, and JSON.parse restores the value', () => {
    const value = { t: '</script><!-- \u2028 x' };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/<\//);
    expect(text).not.toContain('<!--');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('neutralises </script in inline JavaScript without changing string values', () => {
    const js = 'var s = "</script>" + "<!--";';
    const safe = scriptSafe(js);
    expect(safe).not.toMatch(/<\/script/i);
    expect(vm.runInNewContext(`${safe}; s`)).toBe('</script><!--');
  });

  it('escapes Markdown table and emphasis characters and raw HTML', () => {
    expect(escapeMarkdown('a|b *c* _d_ <e> [f](g)\nh')).toBe('a\\|b \\*c\\* \\_d\\_ &lt;e&gt; \\[f\\](g) h');
  });

  it('picks a code fence longer than any backtick run', () => {
    expect(codeFence('plain')).toBe('```');
    expect(codeFence('a ```` b')).toBe('`````');
  });
});
