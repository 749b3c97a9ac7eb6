import type { TextField } from "./text-field.js";

/** A listing's input and output JSON Schemas, edited as text. */
export function SchemaFields({ input, output }: { input: TextField; output: TextField }) {
  return (
    <>
      <label>
        Input schema (JSON Schema)
        <textarea rows={6} className="mono" {...input} />
      </label>
      <label>
        Output schema (JSON Schema)
        <textarea rows={6} className="mono" {...output} />
      </label>
    </>
  );
}
