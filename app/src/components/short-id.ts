// An address, signature or id cut to its first six and last four characters, for lists where the
// whole value sits in a title or a link.
export const shortId = (value: string): string => `${value.slice(0, 6)}…${value.slice(-4)}`;
