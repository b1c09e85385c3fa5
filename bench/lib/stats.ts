/** Small statistics helpers for the bench report. */

export function median(values: ReadonlyArray<number | null | undefined>): number | null {
  const xs = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v)).toSorted((a, b) => a - b);
  if (!xs.length) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}

export function range(values: ReadonlyArray<number | null | undefined>): [number, number] | null {
  const xs = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  if (!xs.length) return null;
  return [Math.min(...xs), Math.max(...xs)];
}

export function max(values: ReadonlyArray<number | null | undefined>): number | null {
  return range(values)?.[1] ?? null;
}

/** `a / b` per round, skipping rounds where either is missing. */
export function perRoundRatios(a: ReadonlyArray<number | null>, b: ReadonlyArray<number | null>): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === "number" && typeof y === "number" && y > 0) out.push(x / y);
  }
  return out;
}

/** `a - b` per round. */
export function perRoundDiffs(a: ReadonlyArray<number | null>, b: ReadonlyArray<number | null>): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === "number" && typeof y === "number") out.push(x - y);
  }
  return out;
}

export function fmt(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  return value.toFixed(digits);
}

export function fmtRange(values: ReadonlyArray<number>, digits = 2): string {
  const r = range(values);
  if (!r) return "–";
  return `${fmt(median(values), digits)} (${fmt(r[0], digits)}–${fmt(r[1], digits)})`;
}
