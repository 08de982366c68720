// The server's files: browse folders, open a text file in the editor, upload with progress
// (file_upload, multipart: `directory` first, then `file`, X-CSRF-Token header), download (a
// signed URL on the node, valid 15 minutes), rename or move, copy, delete (the names are listed
// before), pack into a .tar.gz, unpack, and make a folder. Paths are from the server root.

import { type KeyboardEvent, lazy, type MouseEvent, type ReactNode, Suspense, useRef, useState } from 'react';
import { Alert, Button, Empty, ErrorAlert, fieldError, Loading, TextField } from '../../../components/ui.tsx';
import { ApiError, uploadWithProgress } from '../../../lib/api.ts';
import { when } from '../../../lib/format.ts';
import { bytes, type GameFile, gameRead, uploadPath, useGame, useGameAction } from './gameApi.ts';

const FileEditor = lazy(() => import('./FileEditor.tsx'));

const ARCHIVE = /\.(zip|tar|tar\.gz|tgz|gz|tar\.bz2|tbz2|bz2|tar\.xz|txz|xz|7z|rar)$/i;

/** A choice in a row's menu closes the menu (a click from the keyboard too). */
/** Escape closes a row's menu and puts the focus back on its button. */
function closeOnEscape(event: KeyboardEvent<HTMLDetailsElement>) {
  if (event.key !== 'Escape' || !event.currentTarget.open) return;
  event.currentTarget.open = false;
  event.currentTarget.querySelector('summary')?.focus();
}

function MenuItem({
  onSelect,
  danger = false,
  disabled = false,
  children,
}: {
  onSelect: () => void;
  danger?: boolean;
  disabled?: boolean;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      className={danger ? 'danger' : undefined}
      disabled={disabled}
      onClick={(event: MouseEvent<HTMLButtonElement>) => {
        event.currentTarget.closest('details')?.removeAttribute('open');
        onSelect();
      }}
    >
      {children}
    </button>
  );
}

const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

type Dialog = { kind: 'rename'; file: GameFile } | { kind: 'delete'; names: string[] } | { kind: 'folder' } | null;

interface Upload {
  name: string;
  fraction: number;
  index: number;
  total: number;
}

export default function GameFiles({ serviceId }: { serviceId: number }) {
  const [dir, setDir] = useState('/');
  const [editing, setEditing] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState<Dialog>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const list = useGame<{ directory: string; files: GameFile[] }>(serviceId, 'files', { directory: dir });

  const refresh = ['files'];
  const rename = useGameAction(serviceId, 'files_rename', refresh);
  const remove = useGameAction(serviceId, 'files_delete', refresh);
  const copy = useGameAction(serviceId, 'file_copy', refresh);
  const compress = useGameAction<{ archive: GameFile }>(serviceId, 'files_compress', refresh);
  const decompress = useGameAction(serviceId, 'file_decompress', refresh);
  const folder = useGameAction<{ path: string }>(serviceId, 'folder_create', refresh);

  const go = (to: string) => {
    setDir(to);
    setSelected(new Set());
    setDialog(null);
    setNotice(null);
    setActionError(null);
  };

  const openDialog = (next: Dialog) => {
    setDialog(next);
    setNotice(null);
    setActionError(null);
    rename.reset();
    remove.reset();
    folder.reset();
  };

  const done = (message: string) => {
    setNotice(message);
    setActionError(null);
    setDialog(null);
    setSelected(new Set());
  };
  const failed = (error: unknown) => {
    setNotice(null);
    setActionError(error);
  };

  const [downloading, setDownloading] = useState<string | null>(null);
  const download = async (path: string) => {
    setDownloading(path);
    setActionError(null);
    try {
      const answer = await gameRead<{ download: { url: string } }>(serviceId, 'file_download', { path });
      // The node answers with an attachment, so the page stays; the link works once.
      window.location.assign(answer.download.url);
      setNotice(`Downloading ${path.split('/').pop() ?? path}: your browser saves it.`);
    } catch (error) {
      failed(error);
    } finally {
      setDownloading(null);
    }
  };

  // ---- uploads, one file after another ----
  const fileInput = useRef<HTMLInputElement>(null);
  const [upload, setUpload] = useState<Upload | null>(null);
  const [uploadError, setUploadError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  const startUpload = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    const all = [...files];
    const controller = new AbortController();
    abort.current = controller;
    setUploadError(null);
    setNotice(null);
    const target = dir;
    let sent = 0;
    for (const [index, file] of all.entries()) {
      setUpload({ name: file.name, fraction: 0, index, total: all.length });
      const form = new FormData();
      form.append('directory', target);
      form.append('file', file, file.name);
      try {
        await uploadWithProgress(
          uploadPath(serviceId),
          form,
          (fraction) => setUpload({ name: file.name, fraction, index, total: all.length }),
          controller.signal,
        );
        sent++;
      } catch (error) {
        setUploadError(
          error instanceof ApiError && error.code !== 'aborted'
            ? new ApiError(error.status, { message: `${file.name}: ${error.message}`, code: error.code }, null)
            : error,
        );
        break;
      }
    }
    setUpload(null);
    abort.current = null;
    if (fileInput.current) fileInput.current.value = '';
    if (sent > 0) {
      setNotice(`${sent === 1 ? all[0]?.name : `${sent} files`} uploaded to ${target}.`);
      void list.refetch();
    }
  };

  if (editing) {
    return (
      <Suspense fallback={<Loading what="Opening the editor" />}>
        <FileEditor
          serviceId={serviceId}
          path={editing}
          onClose={() => {
            setEditing(null);
            void list.refetch();
          }}
          onDownload={download}
        />
        {notice ? <Alert kind="success">{notice}</Alert> : null}
        <ErrorAlert error={actionError} />
      </Suspense>
    );
  }

  const files = [...(list.data?.files ?? [])].sort((a, b) =>
    a.is_file === b.is_file ? a.name.localeCompare(b.name) : a.is_file ? 1 : -1,
  );
  const crumbs = dir === '/' ? [] : dir.slice(1).split('/');
  const toggle = (name: string) => {
    const next = new Set(selected);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    setSelected(next);
  };
  const names = [...selected];

  return (
    <div className="game-files">
      <nav aria-label="Folder" className="game-crumbs">
        <button
          type="button"
          className="link-button"
          onClick={() => go('/')}
          aria-current={dir === '/' ? 'page' : undefined}
        >
          Server root
        </button>
        {crumbs.map((part, i) => {
          const to = `/${crumbs.slice(0, i + 1).join('/')}`;
          return (
            <span key={to}>
              <span aria-hidden="true"> / </span>
              <button
                type="button"
                className="link-button"
                onClick={() => go(to)}
                aria-current={to === dir ? 'page' : undefined}
              >
                {part}
              </button>
            </span>
          );
        })}
      </nav>

      <div className="row game-toolbar">
        <label className="btn btn-secondary game-upload">
          Upload files
          <input
            ref={fileInput}
            type="file"
            multiple
            className="sr-only"
            disabled={upload !== null}
            onChange={(e) => void startUpload(e.target.files)}
          />
        </label>
        <Button variant="secondary" onClick={() => openDialog({ kind: 'folder' })}>
          New folder
        </Button>
        <Button variant="secondary" onClick={() => void list.refetch()} busy={list.isFetching}>
          Refresh
        </Button>
      </div>
      <p className="hint">Uploads go into {dir}, up to 100 MB a file.</p>

      {upload ? (
        <div className="game-progress" role="status">
          <label htmlFor={`game-upload-${serviceId}`}>
            Uploading {upload.name}
            {upload.total > 1 ? ` (${upload.index + 1} of ${upload.total})` : ''}: {Math.round(upload.fraction * 100)}%
          </label>
          <div className="row">
            <progress id={`game-upload-${serviceId}`} className="progress" max={1} value={upload.fraction} />
            <Button variant="secondary" onClick={() => abort.current?.abort()}>
              Cancel upload
            </Button>
          </div>
        </div>
      ) : null}
      <ErrorAlert error={uploadError} />

      {selected.size > 0 ? (
        <fieldset className="row game-selection">
          <legend className="sr-only">Selected files</legend>
          <span>{selected.size} selected</span>
          <Button
            variant="secondary"
            busy={compress.isPending}
            onClick={() =>
              compress.mutate(
                { root: dir, files: names },
                { onSuccess: (a) => done(`Packed into ${a.archive.name}.`), onError: failed },
              )
            }
          >
            Pack as .tar.gz
          </Button>
          <Button variant="danger" onClick={() => openDialog({ kind: 'delete', names })}>
            Delete…
          </Button>
          <Button variant="ghost" onClick={() => setSelected(new Set())}>
            Clear selection
          </Button>
        </fieldset>
      ) : null}

      {dialog?.kind === 'folder' ? (
        <form
          className="card game-dialog"
          onSubmit={(e) => {
            e.preventDefault();
            const name = String(new FormData(e.currentTarget).get('name') ?? '').trim();
            folder.mutate({ root: dir, name }, { onSuccess: (a) => done(`Folder ${a.path} created.`) });
          }}
        >
          <TextField
            label={`New folder in ${dir}`}
            name="name"
            required
            autoFocus
            error={fieldError(folder.error, 'name')}
          />
          <ErrorAlert error={folder.error} fields={['name']} />
          <div className="row">
            <Button type="submit" busy={folder.isPending}>
              Create folder
            </Button>
            <Button variant="secondary" onClick={() => setDialog(null)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}

      {dialog?.kind === 'rename' ? (
        <form
          className="card game-dialog"
          onSubmit={(e) => {
            e.preventDefault();
            const to = String(new FormData(e.currentTarget).get('to') ?? '').trim();
            rename.mutate(
              { root: dir, files: [{ from: dialog.file.name, to }] },
              { onSuccess: () => done(`${dialog.file.name} renamed to ${to}.`) },
            );
          }}
        >
          <TextField
            label={`New name for ${dialog.file.name}`}
            name="to"
            defaultValue={dialog.file.name}
            required
            autoFocus
            hint="A name with folders (backups/old.txt, ../x) moves it; from this folder."
            error={fieldError(rename.error, 'files.0.to') ?? fieldError(rename.error, 'files')}
          />
          <ErrorAlert error={rename.error} fields={['files.0.to', 'files']} />
          <div className="row">
            <Button type="submit" busy={rename.isPending}>
              Rename
            </Button>
            <Button variant="secondary" onClick={() => setDialog(null)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}

      {dialog?.kind === 'delete' ? (
        <div className="confirm game-dialog" role="alertdialog" aria-labelledby="game-delete-title">
          <p id="game-delete-title">
            <strong>
              Delete {dialog.names.length === 1 ? 'this' : `these ${dialog.names.length}`} from{' '}
              {dir === '/' ? 'the server root' : dir}? This cannot be undone.
            </strong>
          </p>
          <ul className="game-names">
            {dialog.names.map((n) => (
              <li key={n} className="mono">
                {n}
              </li>
            ))}
          </ul>
          <ErrorAlert error={remove.error} />
          <div className="row">
            <Button
              variant="danger"
              busy={remove.isPending}
              onClick={() =>
                remove.mutate(
                  { root: dir, files: dialog.names },
                  { onSuccess: () => done(`Deleted ${dialog.names.join(', ')}.`) },
                )
              }
            >
              Delete
            </Button>
            <Button variant="secondary" autoFocus onClick={() => setDialog(null)}>
              Cancel
            </Button>
          </div>
        </div>
      ) : null}

      {notice ? <Alert kind="success">{notice}</Alert> : null}
      <ErrorAlert error={actionError} />

      {list.isPending ? <Loading what="Loading files" /> : null}
      {list.error ? (
        <div>
          <ErrorAlert error={list.error} />
          {dir !== '/' ? (
            <Button variant="secondary" onClick={() => go('/')}>
              Back to the server root
            </Button>
          ) : null}
        </div>
      ) : null}
      {list.data && files.length === 0 ? (
        <Empty title="This folder is empty">
          <p>Upload files into it or make a folder.</p>
        </Empty>
      ) : null}
      {files.length > 0 ? (
        <ul className="game-file-list" aria-label={`Files in ${dir}`}>
          {dir !== '/' ? (
            <li className="game-file">
              <span />
              <button
                type="button"
                className="link-button game-file-name"
                onClick={() => go(dir.split('/').slice(0, -1).join('/') || '/')}
              >
                .. (up one folder)
              </button>
            </li>
          ) : null}
          {files.map((f) => (
            <li key={f.name} className="game-file">
              <input
                type="checkbox"
                checked={selected.has(f.name)}
                onChange={() => toggle(f.name)}
                aria-label={`Select ${f.name}`}
              />
              <span className="game-file-main">
                <button
                  type="button"
                  className="link-button game-file-name"
                  onClick={() => (f.is_file ? setEditing(join(dir, f.name)) : go(join(dir, f.name)))}
                >
                  <FileIcon folder={!f.is_file} />
                  {f.name}
                  {f.is_file ? null : <span className="sr-only"> (folder)</span>}
                </button>
                <span className="muted game-file-meta">
                  {f.is_file ? bytes(f.size) : 'Folder'} · {when(f.modified_at)}
                </span>
              </span>
              <details className="game-menu" onKeyDown={closeOnEscape}>
                <summary aria-label={`Actions for ${f.name}`}>Actions</summary>
                <div className="game-menu-items">
                  {f.is_file ? (
                    <>
                      <MenuItem onSelect={() => setEditing(join(dir, f.name))}>Edit</MenuItem>
                      <MenuItem
                        disabled={downloading === join(dir, f.name)}
                        onSelect={() => void download(join(dir, f.name))}
                      >
                        Download
                      </MenuItem>
                      <MenuItem
                        onSelect={() =>
                          copy.mutate(
                            { path: join(dir, f.name) },
                            { onSuccess: () => done(`Copied ${f.name}.`), onError: failed },
                          )
                        }
                      >
                        Make a copy
                      </MenuItem>
                      {ARCHIVE.test(f.name) ? (
                        <MenuItem
                          onSelect={() =>
                            decompress.mutate(
                              { path: join(dir, f.name) },
                              { onSuccess: () => done(`Unpacked ${f.name} into ${dir}.`), onError: failed },
                            )
                          }
                        >
                          Unpack here
                        </MenuItem>
                      ) : null}
                    </>
                  ) : (
                    <MenuItem onSelect={() => go(join(dir, f.name))}>Open</MenuItem>
                  )}
                  <MenuItem onSelect={() => openDialog({ kind: 'rename', file: f })}>Rename or move</MenuItem>
                  <MenuItem
                    onSelect={() =>
                      compress.mutate(
                        { root: dir, files: [f.name] },
                        { onSuccess: (a) => done(`Packed into ${a.archive.name}.`), onError: failed },
                      )
                    }
                  >
                    Pack as .tar.gz
                  </MenuItem>
                  <MenuItem danger onSelect={() => openDialog({ kind: 'delete', names: [f.name] })}>
                    Delete…
                  </MenuItem>
                </div>
              </details>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function FileIcon({ folder }: { folder: boolean }) {
  return (
    <svg className="game-file-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      {folder ? (
        <path
          fill="currentColor"
          d="M1.5 3A1.5 1.5 0 0 1 3 1.5h3.4l1.6 2h5A1.5 1.5 0 0 1 14.5 5v7.5A1.5 1.5 0 0 1 13 14H3a1.5 1.5 0 0 1-1.5-1.5z"
        />
      ) : (
        <path fill="none" stroke="currentColor" strokeWidth="1.3" d="M3.5 1.5h6l3 3v10h-9zM9.5 1.5v3h3" />
      )}
    </svg>
  );
}
