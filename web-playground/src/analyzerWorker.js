// The analyzer's wasm, run in a Web Worker so that no input can freeze the page: the page
// gives each analysis a time budget and, past it, terminates this worker and starts a fresh
// one (analyzer.js). Messages: {type: "init", pkgUrl} → {type: "ready", rules} or
// {type: "failed", message}; {type: "analyze", id, source, filename} → {type: "report", id,
// json, ms} or {type: "error", id, message}.
let pkg = null;

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    try {
      pkg = await import(/* @vite-ignore */ data.pkgUrl);
      await pkg.default();
      self.postMessage({ type: "ready", rules: pkg.rules() });
    } catch (error) {
      self.postMessage({ type: "failed", message: String(error?.message ?? error) });
    }
  } else if (data.type === "analyze") {
    const started = performance.now();
    try {
      const json = pkg.analyze(data.source, data.filename);
      self.postMessage({ type: "report", id: data.id, json, ms: performance.now() - started });
    } catch (error) {
      self.postMessage({ type: "error", id: data.id, message: String(error?.message ?? error) });
    }
  }
};
