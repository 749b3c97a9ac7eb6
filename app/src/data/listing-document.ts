// The listing document as a creator types it (name, description, tags, the two JSON Schemas):
// checked as the relayer checks it, and hashed on chain by register_agent and update_agent.
import type { ListingDocument } from "@agent-market/program";

export type CheckedDocument = ListingDocument & { input_schema: Record<string, unknown>; output_schema: Record<string, unknown> };

export interface DocumentForm {
  name: string;
  description: string;
  /** Comma separated. */
  tags: string;
  input: string;
  output: string;
}

export const NEW_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}';

function jsonObject(text: string, what: string): { value: Record<string, unknown> } | { problem: string } {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: `${what} must be a JSON object (a JSON Schema).` };
    return { value: value as Record<string, unknown> };
  } catch (error) {
    return { problem: `${what} is not JSON: ${(error as Error).message}` };
  }
}

/** The document, or what is wrong with it, each problem naming its field. */
export function checkDocument(form: DocumentForm): CheckedDocument | string[] {
  const found: string[] = [];
  if (form.name.trim() === "" || form.name.length > 100) found.push("Name: 1 to 100 characters.");
  if (form.description.trim() === "" || form.description.length > 5000) found.push("Description: 1 to 5,000 characters.");
  const tags = form.tags.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (tags.length > 20) found.push("Tags: at most 20.");
  const input = jsonObject(form.input, "Input schema");
  const output = jsonObject(form.output, "Output schema");
  if ("problem" in input) found.push(input.problem);
  if ("problem" in output) found.push(output.problem);
  if (found.length > 0 || "problem" in input || "problem" in output) return found;
  return { name: form.name.trim(), description: form.description.trim(), tags, input_schema: input.value, output_schema: output.value };
}

/** A listing's document as the form shows it, to edit it. */
export function documentForm(listing: { name: string; description: string; tags: string[]; input_schema: unknown; output_schema: unknown }): DocumentForm {
  return {
    name: listing.name,
    description: listing.description,
    tags: listing.tags.join(", "),
    input: JSON.stringify(listing.input_schema, null, 2),
    output: JSON.stringify(listing.output_schema, null, 2),
  };
}
