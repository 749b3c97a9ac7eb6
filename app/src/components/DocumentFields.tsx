import type { TextField } from "./text-field.js";

/** A listing's name, tags and description. */
export function DocumentFields({ name, tags, description }: { name: TextField; tags: TextField; description: TextField }) {
  return (
    <>
      <label>
        Name
        <input {...name} maxLength={100} />
      </label>
      <label>
        Tags (comma separated)
        <input {...tags} />
      </label>
      <label>
        Description
        <textarea rows={3} {...description} />
      </label>
    </>
  );
}
