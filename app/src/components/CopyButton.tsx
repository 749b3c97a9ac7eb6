import { useState } from "react";

export function CopyButton({ text, label = "Copy", autoFocus = false }: { text: string; label?: string; autoFocus?: boolean }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      autoFocus={autoFocus}
      onClick={() => {
        void navigator.clipboard.writeText(text).then(
          () => setCopied(true),
          () => setCopied(false),
        );
      }}
    >
      {copied ? "Copied" : label}
      <span className="visually-hidden" aria-live="polite">
        {copied ? " to the clipboard" : ""}
      </span>
    </button>
  );
}
