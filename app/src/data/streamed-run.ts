// A web run streamed: the output's text as the creator produces it, then the final execution. A
// stream that breaks ends only the page's view of the run, which the relayer settles or refunds
// all the same: its outcome is then read by id, so the form still ends on the charge and the
// receipt (or the refund). A relayer that answers JSON is taken as today's run: the client makes
// its output the one chunk.
import {
  ExecutionFailedError,
  StreamInterruptedError,
  type AgentMarket,
  type ExecuteInput,
  type ExecuteStreamOptions,
  type Execution,
} from "@agent-market/client";

const POLL_MS = 1_000;
/** Longer than any agent's time limit and its settlement: past it, the stream's own error stands. */
const POLL_FOR_MS = 10 * 60_000;

/** The execution once final; rejects with `interrupted` if it is not within POLL_FOR_MS. */
async function finalExecution(client: AgentMarket, interrupted: StreamInterruptedError & { executionId: string }): Promise<Execution> {
  for (const until = Date.now() + POLL_FOR_MS; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, POLL_MS))) {
    const execution = await client.executions.get(interrupted.executionId);
    if (execution.status === "succeeded") return execution;
    if (execution.status === "refunded" || execution.status === "failed") {
      // As the stream's `refunded` event would have said it.
      throw new ExecutionFailedError({
        status: undefined,
        code: execution.failure?.code ?? execution.status,
        type: "api_error",
        message: execution.failure?.message ?? `the execution was ${execution.status}`,
        details: { refund_transaction: execution.transactions.refund, execution },
        execution,
      });
    }
  }
  throw interrupted;
}

/** Runs the agent, calling `onText` with the output so far at each chunk; resolves with the final execution. */
export async function streamedRun(
  client: AgentMarket,
  agentId: string,
  input: ExecuteInput,
  options: ExecuteStreamOptions,
  onText: (text: string) => void,
): Promise<Execution> {
  const stream = await client.agents.executeStream(agentId, input, options);
  let text = "";
  try {
    for await (const chunk of stream) onText((text += chunk.text));
    return await stream.result;
  } catch (error) {
    if (!(error instanceof StreamInterruptedError) || error.executionId === undefined) throw error;
    return finalExecution(client, error as StreamInterruptedError & { executionId: string });
  }
}
