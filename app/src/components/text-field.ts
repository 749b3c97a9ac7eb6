/** What a form's `field(name)` helper spreads onto an input or a textarea. */
export interface TextField {
  value: string;
  onChange(event: { target: { value: string } }): void;
}
