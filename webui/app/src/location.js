// The get_location client tool: the server never runs it, the page does.
// It asks for no permission: the city is read from the browser's time zone
// (e.g. "Europe/Paris" → "Paris"), which is what a person would expect a
// chat page to know without a prompt.

export const LOCATION_TOOL = 'get_location';

// The tool as declared to an AG-UI agent (a frontend tool).
export const locationToolDeclaration = {
  name: LOCATION_TOOL,
  description: "Returns the user's approximate location (city and time zone), read from the browser.",
  parameters: { type: 'object', properties: {}, additionalProperties: false },
};

export function getLocation() {
  const { timeZone, locale } = Intl.DateTimeFormat().resolvedOptions();
  const zone = timeZone || 'UTC';
  const slash = zone.lastIndexOf('/');
  const city = slash >= 0 ? zone.slice(slash + 1).replaceAll('_', ' ') : 'an unknown place';
  return { city, timeZone: zone, locale };
}
