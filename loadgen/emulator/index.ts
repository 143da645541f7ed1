export type { EmulatorOptions, EmulatorStats, RunningEmulator } from './emulator.js';
export { EmulatorOptionError, startEmulator } from './emulator.js';
export type { Faults } from './faults.js';
export { FAULT_FIELDS, FaultError, NO_FAULTS } from './faults.js';
export type { FixedEngineConfig } from './fixed-engine.js';
export { FixedEngine } from './fixed-engine.js';
export { DEFAULT_PROFILE, EMULATOR_PROFILES, FIXED_PROFILE } from './profiles.js';
