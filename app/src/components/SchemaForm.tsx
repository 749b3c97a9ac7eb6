// Inputs generated from a JSON Schema object's properties: text, enums, numbers, booleans; any
// other type as JSON. Returns the parameters object (or the first problem) through onChange.
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

function toParameters(properties: Record<string, PropertySchema>, values: Values): Record<string, unknown> | string {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = values[name];
    if (value === "" || value === undefined) continue;
    switch (kind(schema)) {
      case "boolean":
        out[name] = value === true;
        break;
      case "number":
      case "integer": {
        const n = Number(value);
        if (!Number.isFinite(n) || (kind(schema) === "integer" && !Number.isInteger(n))) return `${name} must be ${kind(schema) === "integer" ? "an integer" : "a number"}`;
        out[name] = n;
        break;
      }
      case "enum":
        out[name] = schema.enum!.find((e) => JSON.stringify(e) === value || e === value);
        break;
      case "string":
        out[name] = value;
        break;
      case "json":
        try {
          out[name] = JSON.parse(String(value));
        } catch {
          return `${name} is not valid JSON`;
        }
    }
  }
  return out;
}

export function SchemaForm({ schema, onChange }: { schema: Record<string, unknown>; onChange: (parameters: Record<string, unknown> | string) => void }) {
  const properties = (schema.properties ?? {}) as Record<string, PropertySchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const [values, setValues] = useState<Values>(() => Object.fromEntries(Object.entries(properties).map(([n, s]) => [n, initial(s)])));
  useEffect(() => onChange(toParameters(properties, values)), [values]); // eslint-disable-line react-hooks/exhaustive-deps

  if (Object.keys(properties).length === 0) return <p className="muted small">This agent takes no parameters.</p>;
  return (
    <fieldset className="schema-form">
      <legend>Parameters</legend>
      {Object.entries(properties).map(([name, prop]) => {
        const id = `param-${name}`;
        const set = (v: string | boolean) => setValues((old) => ({ ...old, [name]: v }));
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
                <input id={id} type="checkbox" checked={values[name] === true} onChange={(e) => set(e.target.checked)} /> {label}
              </label>
            );
          case "enum":
            return (
              <label key={name}>
                {label}
                <select id={id} required={required.has(name)} value={String(values[name])} onChange={(e) => set(e.target.value)}>
                  <option value="">–</option>
                  {prop.enum!.map((option) => (
                    <option key={JSON.stringify(option)} value={typeof option === "string" ? option : JSON.stringify(option)}>
                      {String(option)}
                    </option>
                  ))}
                </select>
              </label>
            );
          case "json":
            return (
              <label key={name}>
                {label} (JSON)
                <textarea id={id} required={required.has(name)} value={String(values[name])} onChange={(e) => set(e.target.value)} rows={3} />
              </label>
            );
          default:
            return (
              <label key={name}>
                {label}
                <input
                  id={id}
                  required={required.has(name)}
                  inputMode={kind(prop) === "string" ? undefined : "decimal"}
                  maxLength={prop.maxLength}
                  value={String(values[name])}
                  onChange={(e) => set(e.target.value)}
                />
              </label>
            );
        }
      })}
    </fieldset>
  );
}
