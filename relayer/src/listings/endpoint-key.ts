// The form in which two listings' endpoints are compared: scheme, lower-case host, port (none
// when it is the scheme's default, as URL writes it) and path without trailing slashes; no query,
// no fragment. A creator's service is listed only by that creator (listing-service.ts): whoever
// lists another creator's endpoint would be paid for work the other creator's service does.

/** The endpoint's comparison key, or null when it is not an absolute URL (the checklist refuses it). */
export function endpointKey(endpoint: string): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return null;
  }
  return `${url.protocol}//${url.host.toLowerCase()}${url.pathname.replace(/\/+$/, "")}`;
}
