// Input echoed back in a message is cut to a short excerpt: a 50 MB YAML value or a 100 KB argument
// must not come back as 50 MB of stderr (nor be held in memory twice to build the message).

/** Characters of input a message shows at most. */
export const EXCERPT_CHARS = 80;

/** `text` if short, else its first `max` characters (never half a surrogate pair) + "…" and the full length. */
export function excerpt(text: string, max = EXCERPT_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--; // do not split a surrogate pair
  return `${text.slice(0, end)}… (${text.length} characters)`;
}
