// A bar chart in SVG, with the same figures as a table for screen readers.
export interface Bar {
  label: string;
  value: number;
  /** Shown on hover and in the table. */
  text: string;
}

export function BarChart({ bars, title, testId }: { bars: readonly Bar[]; title: string; testId?: string }) {
  const max = Math.max(1, ...bars.map((b) => b.value));
  const width = 100 / Math.max(1, bars.length);
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label={title}>
        {bars.map((bar, i) => {
          const height = (bar.value / max) * 38;
          return (
            <rect key={bar.label} x={i * width + width * 0.1} y={40 - height} width={width * 0.8} height={height} className="bar">
              <title>
                {bar.label}: {bar.text}
              </title>
            </rect>
          );
        })}
      </svg>
      <details>
        <summary>Figures</summary>
        <table>
          <tbody>
            {bars
              .filter((b) => b.value > 0)
              .map((bar) => (
                <tr key={bar.label}>
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
