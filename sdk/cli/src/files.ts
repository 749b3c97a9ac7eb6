import { readFile } from "node:fs/promises";

import { CliError } from "./io.js";

export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${what} ${path} is not JSON: ${(error as Error).message}`);
  }
}
