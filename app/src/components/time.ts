// A moment as people read it: in their own time zone, which it names ("Nov 25, 2026, 09:10 PM UTC").

const FORMAT: Intl.DateTimeFormatOptions = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" };

export function timeText(at: string | number | Date): string {
  return new Date(at).toLocaleString([], FORMAT);
}
