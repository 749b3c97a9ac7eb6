import type { ReactNode } from "react";

/**
 * A destructive action asked once more, in place: Cancel has the focus (a stray Enter does no
 * harm) and Escape cancels. The caller puts the focus back on the button that asked.
 */
export function ConfirmAction({
  label,
  question,
  confirm,
  onCancel,
  onConfirm,
}: {
  /** The group's name for a screen reader: "Confirm revoking the allowance". */
  label: string;
  question: ReactNode;
  /** The confirming button's words: "Yes, revoke it". */
  confirm: string;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <div
      className="notice notice-warn confirm"
      role="group"
      aria-label={label}
      onKeyDown={(e) => {
        if (e.key === "Escape") onCancel();
      }}
    >
      <p>{question}</p>
      <div className="row">
        <button type="button" className="danger" onClick={onConfirm}>
          {confirm}
        </button>
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
