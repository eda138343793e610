-- Jobs a write enqueues are rows of its own transaction (decision 019): they exist exactly when
-- the write committed. After the commit they are handed to the queue under the same id (so a
-- hand-over repeated after a crash is a no-op), and a sweeper hands over any a crash left.
CREATE TABLE "JobOutbox" (
    "id" UUID NOT NULL,
    "queue" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "JobOutbox_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "JobOutbox_createdAt_idx" ON "JobOutbox"("createdAt");
