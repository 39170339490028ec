// The source kept in the URL fragment so a link reproduces the page: `#code=` followed by the
// UTF-8 source, deflate-compressed (the browser's CompressionStream) and base64url-encoded.
// `#example=<id>` names a bundled example instead.

export async function encodeSource(source) {
  const stream = new Blob([new TextEncoder().encode(source)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export async function decodeSource(encoded) {
  const base64 = encoded.replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new TextDecoder().decode(await new Response(stream).arrayBuffer());
}

/** What the fragment asks for: `{ code }`, `{ example }`, or `{}`; `{ error }` if undecodable. */
export async function readFragment(hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  try {
    if (params.has("code")) return { code: await decodeSource(params.get("code")) };
  } catch (error) {
    return { error: `the link's source could not be decoded (${error.message})` };
  }
  if (params.has("example")) return { example: params.get("example") };
  return {};
}

/**
 * Replaces the fragment without adding a history entry per keystroke. Encoding is async, so
 * `isCurrent()` lets a caller drop a write that a newer edit has overtaken.
 */
export async function writeFragment(source, isCurrent = () => true) {
  const hash = `#code=${await encodeSource(source)}`;
  if (isCurrent() && location.hash !== hash) history.replaceState(null, "", hash);
  return location.href;
}
