/** A tiny static file server for the built bench pages (production builds, not Vite's dev server). */
import { createReadStream, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, join, normalize, resolve } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml"
};

export interface StaticServer {
  origin: string;
  close(): Promise<void>;
}

/** Serves `mounts` (URL prefix → directory) on 127.0.0.1 at a free port. */
export async function serveStatic(mounts: Record<string, string>): Promise<StaticServer> {
  const roots = Object.entries(mounts)
    .map(([prefix, dir]) => [prefix.endsWith("/") ? prefix : `${prefix}/`, resolve(dir)] as const)
    .toSorted((a, b) => b[0].length - a[0].length);
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const mount = roots.find(([prefix]) => path.startsWith(prefix));
    const file = mount ? normalize(join(mount[1], path.slice(mount[0].length))) : undefined;
    let size = -1;
    try {
      if (file && mount && file.startsWith(mount[1])) size = statSync(file).isFile() ? statSync(file).size : -1;
    } catch {
      size = -1;
    }
    if (!file || size < 0) {
      response.writeHead(404).end("not found");
      return;
    }
    response.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": size,
      "cache-control": "no-store"
    });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      })
  };
}
