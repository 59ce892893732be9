/**
 * Classifies a User-Agent into the agent types the usage log, rankings and
 * stats count. The named AI agents are matched on their documented product
 * tokens (OpenAI: ChatGPT-User, GPTBot, OAI-SearchBot; Anthropic: ClaudeBot,
 * Claude-User, Claude-SearchBot; Perplexity: PerplexityBot, Perplexity-User;
 * Google: Google-Extended). Results are memoised per distinct string (bounded),
 * because the same few agents send almost every request.
 */

export const AGENT_TYPES = [
  'chatgpt_user',
  'gptbot',
  'claudebot',
  'claude_user',
  'perplexitybot',
  'google_extended',
  'other_ai_agent',
  'other_bot',
  'browser',
  'script',
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** Agent types that count as AI-agent traffic (rankings, stats). */
export const AI_AGENT_TYPES: readonly AgentType[] = AGENT_TYPES.filter((t) => !['other_bot', 'browser', 'script'].includes(t));

/** The platform an AI agent type belongs to, for /api/stats. */
export const AGENT_PLATFORM: Partial<Record<AgentType, string>> = {
  chatgpt_user: 'openai',
  gptbot: 'openai',
  claudebot: 'anthropic',
  claude_user: 'anthropic',
  perplexitybot: 'perplexity',
  google_extended: 'google',
  other_ai_agent: 'other_ai',
};

// Order matters: the most specific token first (Claude-User before ClaudeBot's generic "claude").
const RULES: Array<[RegExp, AgentType]> = [
  [/chatgpt-user/i, 'chatgpt_user'],
  [/gptbot/i, 'gptbot'],
  [/oai-searchbot/i, 'chatgpt_user'],
  [/claude-user/i, 'claude_user'],
  [/claudebot|claude-searchbot|anthropic-ai/i, 'claudebot'],
  [/perplexity(bot|-user)/i, 'perplexitybot'],
  [/google-extended/i, 'google_extended'],
  [
    /ccbot|bytespider|amazonbot|applebot-extended|meta-externalagent|meta-externalfetcher|cohere-ai|youbot|duckassistbot|mistralai-user|diffbot|ai2bot|timpibot|omgili/i,
    'other_ai_agent',
  ],
  [/bot\b|bot\/|crawler|spider|slurp|facebookexternalhit|preview/i, 'other_bot'],
  [
    /^(curl|wget|httpie|python|aiohttp|go-http-client|java\/|okhttp|node|undici|axios|got\b|ruby|php|perl|libwww|postmanruntime|insomnia|autocannon|wrk|ab\/|k6|powershell|rust|reqwest|dart)/i,
    'script',
  ],
  [/mozilla\/\d.*(chrome|safari|firefox|edg|opera|gecko)/i, 'browser'],
];

const memo = new Map<string, AgentType>();
const MEMO_MAX = 2000;

/** Classifies a User-Agent header value; empty or unrecognised strings are `script` (programmatic clients). */
export function classifyAgent(userAgent: string | null | undefined): AgentType {
  const ua = userAgent ?? '';
  const hit = memo.get(ua);
  if (hit) return hit;
  let type: AgentType = 'script';
  for (const [re, t] of RULES) {
    if (re.test(ua)) {
      type = t;
      break;
    }
  }
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(ua, type);
  return type;
}
