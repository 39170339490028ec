// Static build of the playground: relative asset URLs so the page works from any directory
// (the Python package's web/ dir, a file server, a sub-path), wasm emitted as a hashed asset.
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1500,
  },
  // the analyzer runs in a module worker that loads the wasm-bindgen package at run time
  worker: { format: "es" },
  server: { host: "127.0.0.1" },
});
