ALTER TYPE billing.subscription_state ADD VALUE 'paused';
