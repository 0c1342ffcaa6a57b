/**
 * The smoke test's sample conversation: twelve turns of one session and its close, for one
 * user, stamped "now". Twelve, because a batch fires at 10 turns (req R-SIG-1, the default
 * `turnThreshold`) and `session.closed` fires a session-close summary over the session's
 * turns (and a batch over turns 11–12, which no batch had taken), so one run exercises
 * ingestion, reflection with the model, one summary and search. The topics change from turn to turn and no turn reads as a correction, so the
 * urgency signals stay below the threshold and the batch fires by count, at turn 10
 * (test/unit/smoke-conversation.test.ts runs the real signal accumulator over it).
 */
import type { SessionClosed, TurnSaved } from '../../events/index.js';

/** A word only this conversation uses, so a search for it can only find what the run wrote. */
export const SEARCH_WORD = 'axolotl';

const EXCHANGES: ReadonlyArray<readonly [query: string, response: string]> = [
  [
    'Hi! I just adopted an axolotl named Pip and I am setting up a cold-water tank for him.',
    'Congratulations on Pip! Axolotls like cool, calm water and a wide tank.',
  ],
  ['What water temperature does an axolotl need?', 'Keep it between 16 and 18 °C; above 24 °C stresses them.'],
  [
    'I work as a night-shift nurse, so I feed my pets early in the morning.',
    'A steady morning routine works well for most pets.',
  ],
  ['My sister Lena lives in Lisbon and wants to visit in October.', 'October is a pleasant month for a visit.'],
  ['I am going to run the Berlin half marathon next spring.', 'Good luck with the training plan!'],
  [
    'Can you suggest a vegetarian dinner with lentils and spinach?',
    'A lentil and spinach dal with rice is quick and filling.',
  ],
  ['I love reading science fiction, especially Ursula Le Guin.', 'The Left Hand of Darkness is a classic of hers.'],
  ['Which filter is quiet enough for a bedroom?', 'A sponge filter driven by a small air pump is nearly silent.'],
  [
    'I have a cat called Miso who sits next to the tank all evening.',
    'Miso will probably find the tank fascinating; keep a lid on it.',
  ],
  [
    'My weekend chores are cleaning the filter sponge and buying frozen bloodworms.',
    'Rinse the sponge in old tank water so the bacteria survive.',
  ],
  ['How often should I change a fifth of the water?', 'Once a week is a good rhythm for a tank that size.'],
  ['Thanks, that is all for today, see you tomorrow.', 'See you tomorrow, and say hello to Pip.'],
];

export interface SmokeConversation {
  userId: string;
  sessionId: string;
  turns: TurnSaved[];
  close: SessionClosed;
  /** The query the search check sends, and the word a result must contain. */
  search: { query: string; word: string };
}

/**
 * The conversation for `userId`, starting at `firstTurnId` (turn ids increase per user, so
 * a run for a user that already has turns must start above them), one second between turns
 * ending at `now`.
 */
export function smokeConversation(userId: string, now: Date, firstTurnId = 1): SmokeConversation {
  const sessionId = `smoke-session-${now.getTime()}`;
  const at = (i: number) => new Date(now.getTime() - (EXCHANGES.length - i) * 1000).toISOString();
  const turns = EXCHANGES.map(
    ([query, response], i): TurnSaved => ({
      type: 'turn.saved',
      version: 1,
      userId,
      sessionId,
      turnId: firstTurnId + i,
      timestamp: at(i),
      query,
      response,
      // Returned with every memory derived from these turns: marks what a smoke run wrote.
      attributes: { source: 'smoke-test' },
    }),
  );
  return {
    userId,
    sessionId,
    turns,
    close: { type: 'session.closed', version: 1, userId, sessionId, timestamp: now.toISOString() },
    search: { query: `${SEARCH_WORD} named Pip`, word: SEARCH_WORD },
  };
}
