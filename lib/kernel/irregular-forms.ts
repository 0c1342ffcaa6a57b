/**
 * English words whose forms a suffix stemmer cannot join: irregular verbs (base, past, past
 * participle: go / went / gone) and irregular plurals (child / children). memory.search looks
 * a query word up under each of its forms, so "When did she go to the beach?" finds "we went
 * to the beach". General English grammar, not any conversation's words; a word with two
 * lemmas (lay: lie and lay) joins both.
 */
const ROWS = [
  'arise arose arisen', 'awake awoke awoken', 'bear bore borne born', 'beat beaten', 'become became', 'begin began begun',
  'bend bent', 'bite bit bitten', 'bleed bled', 'blow blew blown', 'break broke broken', 'breed bred', 'bring brought',
  'build built', 'burn burnt', 'buy bought', 'catch caught', 'choose chose chosen', 'cling clung', 'come came',
  'creep crept', 'deal dealt', 'dig dug', 'draw drew drawn', 'dream dreamt', 'drink drank drunk', 'drive drove driven',
  'eat ate eaten', 'fall fell fallen', 'feed fed', 'feel felt', 'fight fought', 'find found', 'flee fled', 'fly flew flown',
  'forbid forbade forbidden', 'forget forgot forgotten', 'forgive forgave forgiven', 'freeze froze frozen', 'get got gotten',
  'give gave given', 'go went gone', 'grind ground', 'grow grew grown', 'hang hung', 'hear heard', 'hide hid hidden',
  'hold held', 'keep kept', 'kneel knelt', 'know knew known', 'lay laid', 'lead led', 'lean leant', 'leap leapt',
  'learn learnt', 'leave left', 'lend lent', 'lie lay lain', 'light lit', 'lose lost', 'make made', 'mean meant', 'meet met',
  'pay paid', 'ride rode ridden', 'ring rang rung', 'rise rose risen', 'run ran', 'say said', 'see saw seen', 'seek sought',
  'sell sold', 'send sent', 'sew sewn', 'shake shook shaken', 'shine shone', 'shoot shot', 'show shown', 'shrink shrank shrunk',
  'sing sang sung', 'sink sank sunk', 'sit sat', 'sleep slept', 'slide slid', 'speak spoke spoken', 'speed sped', 'spend spent',
  'spin spun', 'stand stood', 'steal stole stolen', 'stick stuck', 'sting stung', 'stink stank stunk', 'strike struck',
  'swear swore sworn', 'sweep swept', 'swim swam swum', 'swing swung', 'take took taken', 'teach taught', 'tear tore torn',
  'tell told', 'think thought', 'throw threw thrown', 'understand understood', 'wake woke woken', 'wear wore worn',
  'weave wove woven', 'weep wept', 'win won', 'wind wound', 'write wrote written',
  'child children', 'man men', 'woman women', 'person people', 'foot feet', 'tooth teeth', 'mouse mice', 'goose geese',
  'life lives', 'wife wives', 'knife knives', 'leaf leaves', 'half halves', 'wolf wolves',
];

const FORMS = new Map<string, readonly string[]>();
const BASE = new Map<string, string>();
for (const row of ROWS) {
  const words = row.split(' ');
  for (const word of words) {
    FORMS.set(word, [...new Set([...(FORMS.get(word) ?? [word]), ...words])]);
    if (!BASE.has(word)) BASE.set(word, words[0] as string);
  }
}

/** A word's base form (went → go, children → child); the word itself when it has no irregular forms. */
export const baseOf = (word: string): string => BASE.get(word) ?? word;

/** A word's forms, the word itself first (just the word when it has no irregular forms). */
export const formsOf = (word: string): readonly string[] => FORMS.get(word) ?? [word];
