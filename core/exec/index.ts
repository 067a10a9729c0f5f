/** The face of core/exec: commands run through a long-lived helper shell (no fork of nodelet per command), and directories made and files written through one. */
export { helperShell, type HelperProgram, type HelperShell, type HelperShellOptions } from './helper-shell.ts';
export { mountSyscalls, type MountSyscallsOptions } from './mount-syscalls.ts';
export { findPerl } from './perl.ts';
export { dirMaker, type DirMaker } from './dir-maker.ts';
export { fileWriter, type FileWriter } from './file-writer.ts';
