// Local-time stamps for file names and report columns, as the reference formats them.

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** `YYYYmmdd_HHMMSS` in local time (the reference's results-file suffix). */
export function fileStamp(d: Date): string {
  return `${d.getFullYear()}${pad2(d.getMonth() + 1)}${pad2(d.getDate())}_${pad2(d.getHours())}${pad2(d.getMinutes())}${pad2(d.getSeconds())}`;
}

/** `YYYY-MM-DD HH:MM:SS` in local time (the reference's Timestamp column). */
export function columnStamp(d: Date): string {
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}
