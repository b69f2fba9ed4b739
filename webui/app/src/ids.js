// Ids for chats and messages the page creates.
export { generateId } from 'ai';
