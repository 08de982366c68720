// xterm.js 6 (its DOM renderer and its viewport) writes its theme, font and scrollbar rules into
// <style> elements it creates during open() and rewrites on every theme change and resize. The
// panel's Content-Security-Policy (`style-src 'self'`, no 'unsafe-inline') refuses those
// elements: the terminal then shows no colours, the wrong font and a broken scrollbar, and the
// console logs a violation each time.
//
// Constructed style sheets (document.adoptedStyleSheets) are not subject to style-src: they are
// CSSOM, like element.style, which only our own script ('self') can reach. So, for the duration of
// term.open() only, the <style> elements xterm asks for are replaced by hidden <span>s whose
// textContent goes into a constructed sheet of their own; removing the span removes its sheet.
// Nothing is inserted that CSP would have to judge, and no server change is needed.

import type { Terminal } from '@xterm/xterm';

export function openWithoutInlineStyles(term: Terminal, parent: HTMLElement): () => void {
  const doc = parent.ownerDocument;
  const supported =
    'adoptedStyleSheets' in doc && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype;
  if (!supported) {
    term.open(parent);
    return () => {};
  }
  const sheets = new Set<CSSStyleSheet>();
  const detach = (sheet: CSSStyleSheet) => {
    sheets.delete(sheet);
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
  };
  const original = doc.createElement;
  const replacement = function (this: Document, tag: string, options?: ElementCreationOptions): HTMLElement {
    if (String(tag).toLowerCase() !== 'style') return original.call(this, tag, options);
    const sink = original.call(this, 'span');
    sink.hidden = true;
    sink.dataset.xtermStyle = '';
    const sheet = new CSSStyleSheet();
    sheets.add(sheet);
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    let text = '';
    Object.defineProperty(sink, 'textContent', {
      configurable: true,
      get: () => text,
      set: (value: unknown) => {
        text = value === null || value === undefined ? '' : String(value);
        try {
          sheet.replaceSync(text);
        } catch {
          // A rule the browser cannot parse: the rest of xterm still works.
        }
      },
    });
    const remove = sink.remove.bind(sink);
    sink.remove = () => {
      detach(sheet);
      remove();
    };
    return sink;
  };
  doc.createElement = replacement as typeof doc.createElement;
  try {
    term.open(parent);
  } finally {
    doc.createElement = original;
  }
  return () => {
    for (const sheet of [...sheets]) detach(sheet);
  };
}
