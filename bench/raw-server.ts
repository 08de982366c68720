// The baseline server: plain node:http answering fixed bytes per path, nothing else.
import { createServer } from 'node:http';

const responses = JSON.parse(process.env.RESPONSES ?? '{}') as Record<
  string,
  { status: number; body: string; type?: string }
>;
createServer((req, res) => {
  const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
  const hit = responses[path];
  if (path === '/__up') return void res.writeHead(200).end('up');
  if (!hit) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false}');
  res.writeHead(hit.status, { 'content-type': hit.type ?? 'application/json; charset=utf-8' }).end(hit.body);
}).listen(Number(process.env.PORT), '127.0.0.1');
