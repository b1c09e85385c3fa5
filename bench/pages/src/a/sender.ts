/** The mounted chat's send function. */
export const sender: { current: ((text: string) => void) | null } = { current: null };
