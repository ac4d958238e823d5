/** Types of the punycode package's CommonJS entry (imported by path so Node's deprecated built-in is not picked). */
declare module 'punycode/punycode.js' {
  const punycode: {
    encode(input: string): string;
    decode(input: string): string;
    toASCII(domain: string): string;
    toUnicode(domain: string): string;
  };
  export default punycode;
}
