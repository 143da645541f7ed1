export type { EmulatorOptions, EmulatorStats, FixedProfileOptions, RunningEmulator } from './emulator.js';
export {
  DEFAULT_PROFILE,
  EMULATOR_PROFILES,
  EmulatorOptionError,
  FIXED_PROFILE,
  startEmulator,
} from './emulator.js';
export type { Faults } from './faults.js';
export { FAULT_FIELDS, FaultError, NO_FAULTS } from './faults.js';
