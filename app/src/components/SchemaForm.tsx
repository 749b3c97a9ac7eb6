// Inputs generated from a JSON Schema object's properties: text, enums, numbers, booleans; any
// other type as JSON. Returns the parameters object and each field's problem through onChange, and
// shows a field's problem beside it (its own check's, or the relayer's refusal of that field).
import { useEffect, useState } from "react";

interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  description?: string;
  title?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

type Values = Record<string, string | boolean>;

function kind(schema: PropertySchema): "string" | "enum" | "number" | "integer" | "boolean" | "json" {
  if (Array.isArray(schema.enum)) return "enum";
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  return type === "string" || type === "number" || type === "integer" || type === "boolean" ? type : "json";
}

function initial(schema: PropertySchema): string | boolean {
  if (kind(schema) === "boolean") return schema.default === true;
  if (schema.default === undefined) return "";
  return typeof schema.default === "string" ? schema.default : JSON.stringify(schema.default);
}

/** Each field's problem, by name: what the form can check before the relayer does. */
export type FieldProblems = Record<string, string>;

function toParameters(properties: Record<string, PropertySchema>, values: Values): { parameters: Record<string, unknown>; problems: FieldProblems } {
  const parameters: Record<string, unknown> = {};
  const problems: FieldProblems = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = values[name];
    if (value === "" || value === undefined) continue;
    switch (kind(schema)) {
      case "boolean":
        parameters[name] = value === true;
        break;
      case "number":
      case "integer": {
        const n = Number(value);
        if (!Number.isFinite(n) || (kind(schema) === "integer" && !Number.isInteger(n))) problems[name] = kind(schema) === "integer" ? "Must be a whole number." : "Must be a number.";
        else parameters[name] = n;
        break;
      }
      case "enum":
        parameters[name] = schema.enum!.find((e) => JSON.stringify(e) === value || e === value);
        break;
      case "string":
        parameters[name] = value;
        break;
      case "json":
        try {
          parameters[name] = JSON.parse(String(value));
        } catch {
          problems[name] = "Is not valid JSON.";
        }
    }
  }
  return { parameters, problems };
}

/** The input of a parameter, for focusing the field a problem is in. */
export const parameterInputId = (name: string) => `param-${name}`;

export function SchemaForm({
  schema,
  onChange,
  refused,
}: {
  schema: Record<string, unknown>;
  onChange: (parameters: Record<string, unknown>, problems: FieldProblems) => void;
  /** The relayer's refusal of one field, shown beside it until the form changes. */
  refused: { field: string; problem: string } | null;
}) {
  const properties = (schema.properties ?? {}) as Record<string, PropertySchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const [values, setValues] = useState<Values>(() => Object.fromEntries(Object.entries(properties).map(([n, s]) => [n, initial(s)])));
  const checked = toParameters(properties, values);
  useEffect(() => onChange(checked.parameters, checked.problems), [values]); // eslint-disable-line react-hooks/exhaustive-deps

  if (Object.keys(properties).length === 0) return <p className="muted small">This agent takes no parameters.</p>;
  return (
    <fieldset className="schema-form">
      <legend>Parameters</legend>
      {Object.entries(properties).map(([name, prop]) => {
        const id = parameterInputId(name);
        const set = (v: string | boolean) => setValues((old) => ({ ...old, [name]: v }));
        const problem = checked.problems[name] ?? (refused?.field === name ? refused.problem : undefined);
        const problemId = `${id}-problem`;
        // Spread onto the field's control: marked invalid and described by its problem.
        const invalid = problem === undefined ? {} : { "aria-invalid": true, "aria-describedby": problemId };
        const beside =
          problem === undefined ? null : (
            <span id={problemId} className="bad small field-problem" data-testid="param-problem">
              {problem}
            </span>
          );
        const label = (
          <span>
            {prop.title ?? name}
            {required.has(name) && <span aria-hidden="true"> *</span>}
            {prop.description && <span className="muted small"> {prop.description}</span>}
          </span>
        );
        switch (kind(prop)) {
          case "boolean":
            return (
              <label key={name} className="check">
                <input id={id} type="checkbox" {...invalid} checked={values[name] === true} onChange={(e) => set(e.target.checked)} /> {label}
                {beside}
              </label>
            );
          case "enum":
            return (
              <label key={name}>
                {label}
                <select id={id} {...invalid} required={required.has(name)} value={String(values[name])} onChange={(e) => set(e.target.value)}>
                  <option value="">–</option>
                  {prop.enum!.map((option) => (
                    <option key={JSON.stringify(option)} value={typeof option === "string" ? option : JSON.stringify(option)}>
                      {String(option)}
                    </option>
                  ))}
                </select>
                {beside}
              </label>
            );
          case "json":
            return (
              <label key={name}>
                {label} (JSON)
                <textarea id={id} {...invalid} required={required.has(name)} value={String(values[name])} onChange={(e) => set(e.target.value)} rows={3} />
                {beside}
              </label>
            );
          default:
            return (
              <label key={name}>
                {label}
                <input
                  id={id}
                  {...invalid}
                  required={required.has(name)}
                  inputMode={kind(prop) === "string" ? undefined : "decimal"}
                  maxLength={prop.maxLength}
                  value={String(values[name])}
                  onChange={(e) => set(e.target.value)}
                />
                {beside}
              </label>
            );
        }
      })}
    </fieldset>
  );
}
