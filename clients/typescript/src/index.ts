/** The TypeScript client of the platform (issue 14 builds it out). */
export const CLIENT_VERSION = '0.4.7';
