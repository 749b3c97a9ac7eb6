import { useId, useState, type FormEvent } from "react";

import { evidenceProblem, MAX_ATTACHMENTS, MAX_STATEMENT_CHARS, readEvidenceFile, type EvidenceFile } from "../data/disputes.js";

/** A statement and up to five files, checked against the relayer's limits before anything is sent. */
export function EvidenceForm({
  title,
  hint,
  submitLabel,
  busyLabel,
  side = "payer",
  onSubmit,
}: {
  title: string;
  hint: string;
  submitLabel: string;
  busyLabel: string | null;
  /** Whose evidence this is: its prompts are that side's. */
  side?: "payer" | "creator";
  /** Resolves true once kept: the form then clears for another submission. */
  onSubmit(statement: string, files: EvidenceFile[]): Promise<boolean>;
}) {
  const id = useId();
  const [statement, setStatement] = useState("");
  const [files, setFiles] = useState<EvidenceFile[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  // A new file input once kept: a file input cannot be emptied from code.
  const [generation, setGeneration] = useState(0);

  function submit(event: FormEvent) {
    event.preventDefault();
    const found = evidenceProblem(statement, files, side);
    setProblem(found);
    if (found !== null) return;
    void onSubmit(statement, files).then((kept) => {
      if (!kept) return;
      setStatement("");
      setFiles([]);
      setGeneration((g) => g + 1);
    });
  }

  return (
    <form className="card form" aria-label={title} onSubmit={submit} noValidate>
      <h3>{title}</h3>
      <p className="muted small">{hint}</p>
      <label>
        {side === "payer" ? "Statement" : "Your answer"}
        <textarea
          rows={5}
          value={statement}
          maxLength={MAX_STATEMENT_CHARS}
          aria-invalid={problem !== null && statement.trim() === ""}
          aria-describedby={problem === null ? undefined : `${id}-problem`}
          onChange={(e) => setStatement(e.target.value)}
        />
      </label>
      <label>
        Attachments (optional, up to {MAX_ATTACHMENTS} files of 1 MiB)
        <input
          key={generation}
          type="file"
          multiple
          onChange={(e) => {
            const chosen = Array.from(e.target.files ?? []);
            void Promise.all(chosen.map(readEvidenceFile)).then(setFiles);
          }}
        />
      </label>
      {files.length > 0 && (
        <ul className="plain small">
          {files.map((f) => (
            <li key={f.name}>
              {f.name} <span className="muted">({f.content_type}, {f.content.length.toLocaleString("en")} bytes)</span>
            </li>
          ))}
        </ul>
      )}
      {problem !== null && (
        <p id={`${id}-problem`} className="bad" role="alert">
          {problem}
        </p>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={busyLabel !== null}>
          {busyLabel ?? submitLabel}
        </button>
      </div>
    </form>
  );
}
