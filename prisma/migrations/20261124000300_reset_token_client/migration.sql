-- A reset link opens in any browser (issue 19): the client whose sign-in asked for it is kept so
-- that the "password changed" page can send the person back to that application.
ALTER TABLE "PasswordResetToken" ADD COLUMN "clientId" TEXT;
