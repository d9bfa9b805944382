// Number, time and size formatting for humans: thousands separators, units,
// relative times. All functions accept null/undefined/NaN and return '—'.

const DASH = '—';
const intFmt = new Intl.NumberFormat('en-US', {maximumFractionDigits: 0});
const fmtCache = new Map();

function fixed(digits) {
  let f = fmtCache.get(digits);
  if (!f) {
    f = new Intl.NumberFormat('en-US', {minimumFractionDigits: digits, maximumFractionDigits: digits});
    fmtCache.set(digits, f);
  }
  return f;
}

const missing = (n) => n === null || n === undefined || Number.isNaN(n);

// 1234567 -> "1,234,567"
export function int(n) {
  return missing(n) ? DASH : intFmt.format(Math.round(n));
}

// A measured quantity with about three significant digits:
// 1234.56 -> "1,235", 12.345 -> "12.3", 0.01234 -> "0.0123", 0 -> "0".
export function num(n) {
  if (missing(n)) return DASH;
  const a = Math.abs(n);
  if (a === 0) return '0';
  if (a >= 100) return intFmt.format(Math.round(n));
  if (a >= 10) return fixed(1).format(n);
  if (a >= 1) return fixed(2).format(n);
  const digits = Math.min(6, 2 - Math.floor(Math.log10(a)));
  return fixed(digits).format(n);
}

// A number with a unit: withUnit(950.2, 'ms/h') -> "950 ms/h".
export function withUnit(n, unit) {
  return missing(n) ? DASH : `${num(n)} ${unit}`;
}

// Percentage from a value already in percent: 9.72 -> "9.7 %".
export function pct(p) {
  return missing(p) ? DASH : `${p >= 10 ? fixed(0).format(p) : fixed(1).format(p)} %`;
}

// A ratio such as new/baseline: 2.345 -> "×2.35".
export function ratio(r) {
  return missing(r) ? DASH : `×${num(r)}`;
}

// A p-value: 0.0004 -> "4.0 × 10⁻⁴"; 0.2 -> "0.20".
export function pValue(p) {
  if (missing(p)) return DASH;
  if (p === 0) return '< 10⁻³⁰⁰';
  if (p >= 0.01) return fixed(2).format(p);
  const [mant, exp] = p.toExponential(1).split('e');
  const sup = {'-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹'};
  return `${mant} × 10${[...String(Number(exp))].map((c) => sup[c] ?? c).join('')}`;
}

// Bytes: 123456789 -> "118 MiB".
export function bytes(n) {
  if (missing(n)) return DASH;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${num(v)} ${units[i]}`;
}

// Seconds as a duration: 3725 -> "1 h 2 min".
export function duration(sec) {
  if (missing(sec)) return DASH;
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr} h ${m % 60} min`;
  return `${Math.floor(hr / 24)} d ${hr % 24} h`;
}

// Milliseconds since the epoch from an ISO string, a number or a Date; null if unreadable.
export function toMs(t) {
  if (missing(t) || t === '') return null;
  if (t instanceof Date) return t.getTime();
  if (typeof t === 'number') return t;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

// Alert times are event times: relative to the stream time (the latest event seen), not
// the wall clock, and labelled so. "18 h ago in stream time"; "—" without a stream time.
export function streamRelative(t, streamTime) {
  const now = toMs(streamTime);
  return now === null || toMs(t) === null ? DASH : `${relative(t, now)} in stream time`;
}

// "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago", "in 3 min".
export function relative(t, now = Date.now()) {
  const ms = toMs(t);
  if (ms === null) return DASH;
  const d = (now - ms) / 1000;
  const a = Math.abs(d);
  let text;
  if (a < 5) return 'just now';
  if (a < 60) text = `${Math.round(a)} s`;
  else if (a < 3600) text = `${Math.round(a / 60)} min`;
  else if (a < 172800) text = `${Math.round(a / 3600)} h`;
  else text = `${Math.round(a / 86400)} d`;
  return d >= 0 ? `${text} ago` : `in ${text}`;
}

// "2026-11-20 10:00:00 UTC"
export function timestamp(t) {
  const ms = toMs(t);
  if (ms === null) return DASH;
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

// "20261117090501" -> "2026-11-17 09:05:01"; other shapes pass through.
export function buildId(id) {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})?(\d{2})?(\d{2})?$/.exec(id ?? '');
  if (!m) return id ?? DASH;
  return m[4] ? `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5] ?? '00'}:${m[6] ?? '00'}` : `${m[1]}-${m[2]}-${m[3]}`;
}
