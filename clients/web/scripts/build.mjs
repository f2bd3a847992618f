// Builds the page's script, dist/app.js (src/main.ts and its imports, bundled by esbuild),
// committed and served by `unoflip serve` from the binary with index.html and style.css.
// Run it with `npm run build`, which first builds the TypeScript package (../typescript) it uses.
import { build } from "esbuild";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
mkdirSync(dist, { recursive: true });
await build({
  entryPoints: [join(root, "src/main.ts")],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  outfile: join(dist, "app.js"),
  // The package (a link to ../typescript, which has its own node_modules for its tests) takes its
  // dependencies from this page's node_modules, so that one copy of each is bundled.
  plugins: [
    {
      name: "one-copy",
      setup(build) {
        const shared = /^@(bufbuild\/protobuf|connectrpc\/connect)(\/|$)/;
        build.onResolve({ filter: shared }, (args) =>
          args.pluginData === "one-copy" || args.resolveDir.startsWith(root)
            ? undefined
            : build.resolve(args.path, { kind: args.kind, resolveDir: root, pluginData: "one-copy" }),
        );
      },
    },
  ],
  logLevel: "warning",
});
console.log("built", dist);
