// A bar chart over time buckets: bars in SVG, with a value axis (its top value and zero, in the
// chart's unit), a time axis with a few readable labels, a spoken summary, and the same figures
// as a table. The axes are HTML beside the SVG: the SVG stretches to its box, which would
// distort any text drawn inside it.
export interface Bar {
  /** Unique among the bars (the bucket's start). */
  key: string;
  /** The bucket in full ("23 Nov, 14:00"), for the hover title and the table. */
  label: string;
  /** The bucket on the time axis ("14:00", "23 Nov"). */
  tick: string;
  value: number;
  /** Shown on hover and in the table. */
  text: string;
}

/** At most this many time labels, so they stay apart even at 375 px. */
const MAX_TICKS = 5;

/** The smallest of 1, 2, 5 × 10ⁿ at or above `value`: a top value that reads well. */
export function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value * (1 - 1e-9)) return step * power;
  return 10 * power;
}

export function BarChart({
  bars,
  title,
  unit,
  unitOfOne = unit,
  format,
  timeAxis,
  testId,
}: {
  bars: readonly Bar[];
  title: string;
  /** The value's unit, as the axis and the summary name it ("executions", "USDC"). */
  unit: string;
  /** The unit of a value of exactly 1, where it differs ("execution"). */
  unitOfOne?: string;
  format: (value: number) => string;
  /** What one bar spans, for the axis title ("hour, local time"). */
  timeAxis: string;
  testId?: string;
}) {
  const unitOf = (value: number) => (value === 1 ? unitOfOne : unit);
  const top = niceCeiling(Math.max(0, ...bars.map((b) => b.value)));
  const width = 100 / Math.max(1, bars.length);
  const every = Math.max(1, Math.ceil(bars.length / MAX_TICKS));
  const total = bars.reduce((sum, b) => sum + b.value, 0);
  const highest = bars.reduce<Bar | null>((best, b) => (best === null || b.value > best.value ? b : best), null);
  const summary =
    bars.length === 0
      ? `${title}: no buckets`
      : `${title} per ${timeAxis}, ${bars[0]!.label} to ${bars[bars.length - 1]!.label}: ${format(total)} ${unitOf(total)} in all` +
        (highest !== null && highest.value > 0 ? `, most at ${highest.label} (${format(highest.value)} ${unitOf(highest.value)})` : "");
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>
        {title} <span className="muted small">({unit} per {timeAxis})</span>
      </figcaption>
      <div className="chart-grid">
        <div className="chart-y" aria-hidden="true">
          <span>
            {format(top)} {unitOf(top)}
          </span>
          <span>0</span>
        </div>
        <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label={summary}>
          <line x1="0" x2="100" y1="0.5" y2="0.5" className="gridline" vectorEffect="non-scaling-stroke" />
          <line x1="0" x2="100" y1="20" y2="20" className="gridline" vectorEffect="non-scaling-stroke" />
          {bars.map((bar, i) => {
            const height = (bar.value / top) * 40;
            return (
              <rect key={bar.key} x={i * width + width * 0.1} y={40 - height} width={width * 0.8} height={height} className="bar">
                <title>
                  {bar.label}: {bar.text}
                </title>
              </rect>
            );
          })}
          <line x1="0" x2="100" y1="39.75" y2="39.75" className="axis" vectorEffect="non-scaling-stroke" />
        </svg>
        <div className="chart-x" aria-hidden="true" style={{ gridTemplateColumns: `repeat(${Math.max(1, bars.length)}, 1fr)` }}>
          {bars.map((bar, i) =>
            i % every === 0 ? (
              <span key={bar.key} style={{ gridColumn: `${i + 1} / span ${Math.min(every, bars.length - i)}` }}>
                {bar.tick}
              </span>
            ) : null,
          )}
        </div>
      </div>
      <details>
        <summary>Figures</summary>
        <table>
          <tbody>
            {bars
              .filter((b) => b.value > 0)
              .map((bar) => (
                <tr key={bar.key}>
                  <th scope="row">{bar.label}</th>
                  <td>{bar.text}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
