/** The face of core/exec: commands run through a long-lived helper shell (no fork of nodelet per command). */
export { helperShell, type HelperProgram, type HelperShell, type HelperShellOptions } from './helper-shell.ts';
export { mountSyscalls, type MountSyscallsOptions } from './mount-syscalls.ts';
export { findPerl } from './perl.ts';
