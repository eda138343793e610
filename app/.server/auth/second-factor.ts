/**
 * The step between a successful password and the end of the login. The two-factor issue fills
 * this in (organization policy, enrolled methods); until then no second factor is asked.
 */
export interface SecondFactorDecision {
  required: boolean;
}

export async function decideSecondFactor(_input: { organizationId: string; userId: string; twoFactorPolicy: string }): Promise<SecondFactorDecision> {
  return { required: false };
}
