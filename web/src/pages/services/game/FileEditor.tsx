// A text file of the server in CodeMirror 6: loaded with file_read (text up to 1 MiB; binary 415,
// larger 413: then the file is offered as a download), saved with file_write (Ctrl+S or ⌘S, or
// the Save button). Leaving with unsaved changes asks first. The editor is mounted in a shadow
// root so that CodeMirror puts its styles in a constructed style sheet there: in the document it
// would write a <style> element into <head>, which the panel's CSP (style-src 'self') refuses.

import { EditorState } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { useQuery } from '@tanstack/react-query';
import { basicSetup } from 'codemirror';
import { useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, Loading } from '../../../components/ui.tsx';
import { ApiError } from '../../../lib/api.ts';
import { bytes, gameKey, gameRead, useGameAction } from './gameApi.ts';

/** The panel's colours (its CSS variables reach into the shadow root). */
const THEME = {
  '&': {
    height: 'min(70vh, 36rem)',
    backgroundColor: 'var(--surface)',
    color: 'var(--text)',
    fontSize: '0.9rem',
  },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5' },
  '.cm-gutters': { backgroundColor: 'var(--surface-2)', color: 'var(--muted)', borderRightColor: 'var(--border)' },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--accent-soft)' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '-3px' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection':
    { backgroundColor: 'color-mix(in srgb, var(--accent) 35%, transparent)' },
  '.cm-panels': { backgroundColor: 'var(--surface-2)', color: 'var(--text)' },
  '.cm-textfield, .cm-button': { font: 'inherit', color: 'var(--text)' },
};

export default function FileEditor({
  serviceId,
  path,
  onClose,
  onDownload,
}: {
  serviceId: number;
  path: string;
  onClose: () => void;
  onDownload: (path: string) => void;
}) {
  const file = useQuery({
    queryKey: gameKey(serviceId, 'file_read', { path }),
    queryFn: () => gameRead<{ path: string; size: number; content: string }>(serviceId, 'file_read', { path }),
    refetchOnWindowFocus: false,
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    retry: false,
  });
  const save = useGameAction<{ size: number }, { path: string; content: string }>(serviceId, 'file_write', ['files']);
  const holder = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const saved = useRef('');
  const [dirty, setDirty] = useState(false);
  const [askLeave, setAskLeave] = useState(false);
  const saveRef = useRef<() => void>(() => {});

  saveRef.current = () => {
    const editor = view.current;
    if (!editor || save.isPending) return;
    const content = editor.state.doc.toString();
    save.mutate(
      { path, content },
      {
        onSuccess: () => {
          saved.current = content;
          setDirty(editor.state.doc.toString() !== content);
        },
      },
    );
  };

  const content = file.data?.content;
  useEffect(() => {
    const parent = holder.current;
    if (!parent || content === undefined) return;
    saved.current = content;
    // CodeMirror writes its styles into a <style> element in <head>, which the CSP refuses; in a
    // shadow root it uses a constructed style sheet instead, which the CSP allows.
    const shadow = parent.shadowRoot ?? parent.attachShadow({ mode: 'open' });
    const mount = document.createElement('div');
    shadow.replaceChildren(mount);
    const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
    const editor = new EditorView({
      parent: mount,
      root: shadow,
      state: EditorState.create({
        doc: content,
        extensions: [
          keymap.of([
            {
              key: 'Mod-s',
              preventDefault: true,
              run: () => {
                saveRef.current();
                return true;
              },
            },
          ]),
          basicSetup,
          EditorView.lineWrapping,
          EditorView.theme(THEME, { dark }),
          // An explicit tabindex: the text is what the scroller holds, and a checker (axe-core) counts a
          // contenteditable as reachable by the keyboard only with one.
          EditorView.contentAttributes.of({ 'aria-label': `Contents of ${path}`, tabindex: '0' }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) setDirty(update.state.doc.toString() !== saved.current);
          }),
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
  }, [content, path]);

  // Unsaved work: the browser asks before the page is left.
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);

  const close = () => {
    if (dirty) setAskLeave(true);
    else onClose();
  };

  const unreadable = file.error instanceof ApiError && (file.error.status === 415 || file.error.status === 413);

  return (
    <section className="game-editor" aria-labelledby="game-editor-title">
      <div className="game-editor-head">
        <h3 id="game-editor-title" className="mono">
          {path}
        </h3>
        <div className="row">
          <Button onClick={() => saveRef.current()} busy={save.isPending} disabled={!dirty || file.data === undefined}>
            Save
          </Button>
          <Button variant="secondary" onClick={() => onDownload(path)}>
            Download
          </Button>
          <Button variant="secondary" onClick={close}>
            Close
          </Button>
        </div>
      </div>
      {askLeave ? (
        <Alert kind="warning">
          <p>Your changes to {path} are not saved.</p>
          <div className="row">
            <Button
              onClick={() => {
                saveRef.current();
                setAskLeave(false);
              }}
            >
              Save
            </Button>
            <Button variant="danger" onClick={onClose}>
              Discard changes
            </Button>
            <Button variant="secondary" onClick={() => setAskLeave(false)}>
              Keep editing
            </Button>
          </div>
        </Alert>
      ) : null}
      <ErrorAlert error={save.error} fields={[]} />
      {file.isPending ? <Loading what="Opening the file" /> : null}
      {file.error ? (
        unreadable ? (
          <Alert kind="info">
            <p>{file.error.message}</p>
            <div className="row">
              <Button variant="secondary" onClick={() => onDownload(path)}>
                Download {path.split('/').pop()}
              </Button>
            </div>
          </Alert>
        ) : (
          <ErrorAlert error={file.error} />
        )
      ) : null}
      {file.data ? (
        <p className="hint">
          {bytes(file.data.size)} · Ctrl+S (⌘S on a Mac) saves.{' '}
          <strong className="game-save-state" role="status">
            {save.isPending ? 'Saving…' : dirty ? 'Unsaved changes' : save.isSuccess ? 'Saved' : ''}
          </strong>
        </p>
      ) : null}
      <div className="game-editor-box" ref={holder} />
    </section>
  );
}
