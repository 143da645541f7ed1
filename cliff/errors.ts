/**
 * The error a real run raises for a scenario it cannot reproduce on loopback (an engine profile the
 * emulator does not serve, a P/D role, the SMG dialect). The CLI reports it as invalid input.
 */
export class UnsupportedScenarioError extends Error {
  override readonly name = 'UnsupportedScenarioError';
}
