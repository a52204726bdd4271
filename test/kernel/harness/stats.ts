/**
 * Statistics for comparing kernel observations with predicted probabilities.
 *
 * Every test uses a FIXED significance (DEFAULT_ALPHA = 1e-6), independent of any seed:
 * a correct prediction fails about once in a million runs, so a failure means a wrong
 * prediction (or a harness bug), not bad luck. Power comes from the sample size N:
 * `samplesToDistinguish(p, q)` tells how many packets make a wrong probability q fail
 * when the truth is p (e.g. 0.5 vs 1/3 needs 534 for 99.9% power; N=400 already gives ~96%).
 */

export const DEFAULT_ALPHA = 1e-6;

function logGamma(x: number): number {
  // Lanczos approximation (g=7, n=9), accurate to ~1e-15 for x > 0.
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function logBinomPmf(n: number, k: number, p: number): number {
  if (p <= 0) return k === 0 ? 0 : -Infinity;
  if (p >= 1) return k === n ? 0 : -Infinity;
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) + k * Math.log(p) + (n - k) * Math.log(1 - p);
}

/**
 * Two-sided acceptance interval [lo, hi] for a Binomial(n, p) count: a count outside it
 * has probability at most alpha under p (alpha/2 on each side, exact tails).
 */
export function binomialBound(n: number, p: number, alpha = DEFAULT_ALPHA): { lo: number; hi: number } {
  if (!(n >= 0) || !Number.isInteger(n)) throw new Error(`binomialBound: n must be a non-negative integer, got ${n}`);
  if (!(p >= 0 && p <= 1)) throw new Error(`binomialBound: p must be in [0,1], got ${p}`);
  const pmf = Array.from({ length: n + 1 }, (_, k) => Math.exp(logBinomPmf(n, k, p)));
  let lo = 0;
  let tail = 0;
  while (lo < n && tail + pmf[lo] <= alpha / 2) tail += pmf[lo++];
  let hi = n;
  tail = 0;
  while (hi > 0 && tail + pmf[hi] <= alpha / 2) tail += pmf[hi--];
  return { lo, hi };
}

/** Whether count k is inside binomialBound(n, p, alpha). */
export function binomialConsistent(k: number, n: number, p: number, alpha = DEFAULT_ALPHA): boolean {
  const { lo, hi } = binomialBound(n, p, alpha);
  return k >= lo && k <= hi;
}

/** Regularized upper incomplete gamma Q(a, x) (Numerical Recipes gser/gcf). */
function gammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  const gln = logGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let del = sum;
    let ap = a;
    for (let i = 0; i < 10_000; i++) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * 1e-15) break;
    }
    return 1 - sum * Math.exp(-x + a * Math.log(x) - gln);
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.exp(-x + a * Math.log(x) - gln) * h;
}

/** P(X >= x) for a chi-square variable with df degrees of freedom. */
export function chiSquareSurvival(x: number, df: number): number {
  return gammaQ(df / 2, x / 2);
}

export interface ChiSquareResult {
  consistent: boolean;
  statistic: number;
  df: number;
  pValue: number;
  /** Human-readable reason when not consistent (unexpected outcome, ...). */
  reason?: string;
}

/**
 * Pearson chi-square goodness of fit of observed counts against expected probabilities.
 * An outcome observed with expected probability 0 (or absent from expectedProbs) is an
 * immediate inconsistency; outcomes with probability 0 take no degree of freedom.
 * Expected probabilities must sum to 1 (±1e-9).
 */
export function chiSquareConsistent(
  observed: Readonly<Record<string, number>>,
  expectedProbs: Readonly<Record<string, number>>,
  alpha = DEFAULT_ALPHA,
): ChiSquareResult {
  const sumP = Object.values(expectedProbs).reduce((a, b) => a + b, 0);
  if (Math.abs(sumP - 1) > 1e-9) throw new Error(`chiSquareConsistent: expected probabilities sum to ${sumP}, not 1`);
  const n = Object.values(observed).reduce((a, b) => a + b, 0);
  for (const [k, v] of Object.entries(observed)) {
    if (v > 0 && !((expectedProbs[k] ?? 0) > 0)) {
      return { consistent: false, statistic: Infinity, df: 0, pValue: 0, reason: `outcome ${k} seen ${v}x but expected probability 0` };
    }
  }
  const cells = Object.entries(expectedProbs).filter(([, p]) => p > 0);
  if (n === 0) return { consistent: false, statistic: NaN, df: 0, pValue: 0, reason: 'no observations' };
  if (cells.length <= 1) return { consistent: true, statistic: 0, df: 0, pValue: 1 };
  let stat = 0;
  for (const [k, p] of cells) {
    const e = n * p;
    const o = observed[k] ?? 0;
    stat += ((o - e) * (o - e)) / e;
  }
  const df = cells.length - 1;
  const pValue = chiSquareSurvival(stat, df);
  return pValue >= alpha
    ? { consistent: true, statistic: stat, df, pValue }
    : { consistent: false, statistic: stat, df, pValue, reason: `chi2=${stat.toFixed(2)} df=${df} p=${pValue.toExponential(2)} < ${alpha}` };
}

/** Inverse standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (p <= 0 || p >= 1) throw new Error(`normalQuantile: p must be in (0,1), got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549671010739305, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const pl = 0.02425;
  if (p < pl) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - pl) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/**
 * Packets needed so that, when the kernel's true probability is `p`, a prediction of `q`
 * fails binomialBound(n, q, alpha) with probability at least `power` (normal approximation).
 * Example: samplesToDistinguish(0.5, 1/3) = 534; (0.25, 1/3) ≈ 1900.
 */
export function samplesToDistinguish(p: number, q: number, alpha = DEFAULT_ALPHA, power = 0.999): number {
  if (p === q) return Infinity;
  const za = normalQuantile(1 - alpha / 2);
  const zb = normalQuantile(power);
  const n = ((za * Math.sqrt(q * (1 - q)) + zb * Math.sqrt(p * (1 - p))) / (p - q)) ** 2;
  return Math.ceil(n);
}
