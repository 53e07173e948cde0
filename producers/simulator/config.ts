/** The market model's parameters are a contract: see contracts/model-config.ts. */
export * from '../../contracts/model-config.ts';
