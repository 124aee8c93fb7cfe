// The ceiling baseline: a bare node:http server answering every request with one fixed buffer (the bytes of a
// typical entity response), so the gap to it is what the runtime's own work costs. Prints `listening <port>`.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, portArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: bare-server.ts <body-file> [port]\n');
  process.exit(2);
}
const body = readFileSync(file);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = createServer((req, res) => {
  // Drain any request body so keep-alive connections stay usable.
  req.resume();
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 5_000;
server.listen(Number(portArg ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
