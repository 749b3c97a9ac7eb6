/** Everything a form's check found, listed at once where a screen reader announces it. */
export function FormProblems({ problems, testId }: { problems: readonly string[]; testId: string }) {
  if (problems.length === 0) return null;
  return (
    <div className="notice notice-error" role="alert" data-testid={testId}>
      <ul>
        {problems.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
    </div>
  );
}
